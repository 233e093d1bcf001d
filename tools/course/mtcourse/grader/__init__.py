"""The grader: what the autograder bundle ships and ``course grade`` runs.

It needs nothing of the repository: a *course folder* (``grading.py``) holds the layer's
tests, solution and starter. See ``tools/course/README.md`` for the threat model.
"""
