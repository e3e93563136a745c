"""perfembed from Python, where a user first looks: ``from perfembed import Notebook``.

The notebook entry point (:class:`service.notebook.Notebook`: open the store, search, suggest, tune a
NumPy function, browse the nests) under the project's own name. The packages stay what they are: this
one only names it, and nothing in the product imports it.
"""

from service.notebook import Notebook, TunedFunction

__all__ = ["Notebook", "TunedFunction"]
