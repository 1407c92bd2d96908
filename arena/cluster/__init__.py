"""Tournaments on a Dask cluster: the coordinator, the node's side, the ports."""
