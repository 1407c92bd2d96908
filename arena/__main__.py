"""``python -m arena``: the ``arena`` command, for where only an interpreter is named
(Dask's deployers start workers as ``python -m arena worker ...``)."""

from arena.cli.main import main

main()
