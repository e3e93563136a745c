"""Transformations on the schedule of a Scop, and recipes that chain them."""

from loopnest.transform.fusion import distribute, fuse
from loopnest.transform.interchange import interchange
from loopnest.transform.parallel import parallelize, unroll, vectorize
from loopnest.transform.recipe import STEP_KINDS, Recipe, Step, apply_recipe
from loopnest.transform.skew import skew
from loopnest.transform.tiling import tile

__all__ = ["STEP_KINDS", "Recipe", "Step", "apply_recipe", "distribute", "fuse", "interchange",
           "parallelize", "skew", "tile", "unroll", "vectorize"]
