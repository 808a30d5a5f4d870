"""The NORDLYS test store in 18 stations. Imports nothing of the project: agents reach it over HTTP."""
