# Shipped scenarios: each runs, and answers its question qualitatively.
