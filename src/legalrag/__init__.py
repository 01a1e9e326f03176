"""legalrag: legal retrieval-augmented generation.

Importing the package is cheap: no model, index, HTTP client or heavy library is loaded here.
"""

from legalrag.types import Answer, Citation, Document, DocumentKind, Hit, Query, Step, Turn

__version__ = "0.1.0"

__all__ = ["Answer", "Citation", "Document", "DocumentKind", "Hit", "Query", "Step", "Turn", "__version__"]
