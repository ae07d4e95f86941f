"""``python -m sncc``: the same command line as the ``sncc`` script."""
from sncc.cli import main

if __name__ == "__main__":
    main(prog_name="sncc")
