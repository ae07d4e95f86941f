"""Rendering of a simulation: the text report (rich tables), the JSON document
(``schemas/simulate.schema.json``) and the plot."""
