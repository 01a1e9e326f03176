"""The warm server: one ``legalrag serve`` process holds the index, the encoder, the citation resolver and the
model; ``legalrag ask`` and ``legalrag chat`` hand it the question and print the answer stream.

``client.py`` is what the CLI imports to find the server and talk to it (standard library only, so a fresh
``ask`` starts in a fraction of a second); ``route.py`` decides whether that server answers a question or this
process does, for ``ask``, ``chat`` and the Python API alike; ``build.py`` names the code a process runs (a server of another
build is stale and not used); ``daemon.py`` starts ``legalrag serve`` in the background and stops it.
"""
