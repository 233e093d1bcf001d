"""What the MiniTorch explorer's pages compute, kept apart from Streamlit so it can be tested.

``expression`` (a safe evaluator over Scalars), ``autodiff_graph`` (a Scalar's graph with
every node's derivative), ``strides``, ``training`` (a run of the examples' ``train`` in a
background thread), ``mnist`` and ``plots`` (the Plotly figures).
"""
