# data/ holds op folders for tests (copied into a temporary checkout), not tests: their test_facts.py is an op part.
collect_ignore = ["data"]
