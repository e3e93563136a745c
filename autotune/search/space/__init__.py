"""A nest's recipe space as Optuna parameters: the steps it offers, array roles, and reading a recipe back."""
