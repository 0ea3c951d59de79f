"""A data table that refills itself in place: periodic reloads never disturb the reader."""

from __future__ import annotations

from textual.widgets import DataTable

Rows = list[tuple[str, tuple[str, ...]]]  # (row key, cells)


class RowTable(DataTable):
    """A DataTable of keyed rows, refilled from fresh data while keeping the reader's place."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.shown_rows: Rows | None = None  # what the last refill showed

    def refill(self, rows: Rows, top: bool = False) -> bool:
        """Replace the rows, keeping the cursor on the same row (or at the same place when that
        row is gone; at the top with `top`); an unchanged reload leaves the table alone.
        Returns whether anything changed."""
        if self.shown_rows == rows:
            return False
        selected = self.selected_key()
        index = self.cursor_row
        self.clear()
        for key, cells in rows:
            self.add_row(*cells, key=key)
        self.shown_rows = rows
        keys = [key for key, _ in rows]
        if top:
            return True
        if selected in keys:
            self.move_cursor(row=keys.index(selected))
        elif rows:
            self.move_cursor(row=min(max(index, 0), len(rows) - 1))
        return True

    def selected_key(self) -> str | None:
        """The key of the row under the cursor, or None when the table is empty."""
        if self.row_count == 0:
            return None
        return self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value
