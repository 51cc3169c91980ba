"""Parlour training and evaluation tools, and the ``parlour`` command line."""
