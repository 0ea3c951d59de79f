"""One module per subcommand; each defines NAME, HELP, configure(parser) and run(args).

Modules here import only the standard library at the top, so `elora --help` stays fast.
"""
