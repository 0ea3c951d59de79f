"""`elora skills list|show|forge`: expert profiles for the council."""

from __future__ import annotations

NAME = "skills"
HELP = "list, show or forge expert skills (SKILL.md profiles)"


def configure(parser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    listing = sub.add_parser("list", help="list skills")
    listing.add_argument("--json", action="store_true")
    show = sub.add_parser("show", help="print one skill")
    show.add_argument("skill_id")
    forge = sub.add_parser("forge", help="create or update a skill")
    forge.add_argument("skill_id")
    forge.add_argument("--name", required=True)
    forge.add_argument("--description", required=True)
    forge.add_argument("--instructions", help="tone, method and output constraints")
    forge.add_argument("--file", help="read the instructions from a file")


def run(args) -> int:
    from pathlib import Path

    from core import app
    from core.cli.context import print_json, services
    from core.errors import InvalidInput

    svc = services()
    try:
        if args.action == "show":
            skill = app.get_skill(svc, args.skill_id)
            print(skill.path.read_text(encoding="utf-8"))
            return 0
        if args.action == "forge":
            text = args.instructions
            if args.file:
                text = Path(args.file).read_text(encoding="utf-8")
            if not text:
                raise InvalidInput("give --instructions or --file")
            skill = app.forge_skill(svc, args.skill_id, args.name, args.description, text)
            print(f"forged {skill.skill_id} at {skill.path}")
            return 0
        skills = app.list_skills(svc)
    finally:
        svc.close()
    if getattr(args, "json", False):
        print_json([s.summary() for s in skills])
    else:
        for s in skills:
            print(f"{s.skill_id:<22} {s.name:<24} {s.description}")
    return 0
