"""The tiny English penal code the citation-prediction tests share (a real corpus, indexed by each test)."""

from legalrag.corpora.statutes import statute_document

PENAL_CODE = [
    statute_document("1", "Whoever steals property of another shall be punished for theft.", "Penal Code Art. 1"),
    statute_document("2", "Whoever deceives another to obtain property shall be punished for fraud.", "Penal Code Art. 2"),
    statute_document("3", "An offender who confesses truthfully may receive a lighter punishment.", "Penal Code Art. 3"),
    statute_document("4", "A fine is set according to the circumstances of the crime.", "Penal Code Art. 4"),
    statute_document("5", "An attempted crime may be punished less severely.", "Penal Code Art. 5"),
]
