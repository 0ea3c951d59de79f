"""A progress bar on stderr that shows items per second."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager


@contextmanager
def progress_bar(
    label: str, total: int | None, unit: str = "items"
) -> Iterator[Callable[[int], None]]:
    """Yield `advance(n)`; renders only when stderr is a terminal, so scripts stay clean."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    console = Console(stderr=True)
    columns = [
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[rate]}"),
        TimeElapsedColumn(),
    ]
    with Progress(*columns, console=console, disable=not console.is_terminal) as progress:
        task = progress.add_task(label, total=total, rate="")

        def advance(n: int) -> None:
            progress.advance(task, n)
            speed = progress.tasks[0].speed
            if speed:
                progress.update(task, rate=f"{speed:,.0f} {unit}/s")

        yield advance
