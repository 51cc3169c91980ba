"""``python -m parlour.training.cli``: the ``parlour`` command line, for when the script is not on the PATH."""

from parlour.training.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
