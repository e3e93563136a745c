"""The errors the core's callers see. Every user error is a :class:`PerfembedError` (bad C, an unsupported
construct, an illegal recipe, a missing parameter: the CLI's exit 2, the API's 4xx); an
:class:`InternalError` is a perfembed bug. They are defined by the layer that raises them; the CLI and the
API catch them through here."""

from loopnest.errors import InternalError, ParameterError, PerfembedError, RecipeError

__all__ = ["InternalError", "ParameterError", "PerfembedError", "RecipeError"]
