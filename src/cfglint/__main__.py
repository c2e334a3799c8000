from cfglint.cli import run

run()
