"""Small, complete examples written against sc2dask's public interfaces."""
