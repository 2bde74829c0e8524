"""Lower bounds, approximation factors and ratio checks, one module per problem family."""
