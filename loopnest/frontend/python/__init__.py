"""The Python frontend: NumPy kernels (loops over ``range``, slices, ufuncs, reductions, ``@``) parsed with
:mod:`ast`, never imported nor run, and lowered to the IR the C frontend builds (:func:`.extract.extract_python`)."""
