"""The vector tier: the embeddings client (client), vec0 rows and the vector cache at index time
(tier), and float32 packing (pack)."""
