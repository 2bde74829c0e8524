"""Lower bounds, approximation factors and ratio checks, one module per problem family."""

#: The package exports nothing itself: import its modules (``from bounds import mig``).
__all__: list[str] = []
