"""National law over time: versions of each law with their intervals in force, supersession and repeal, the
article renumbering between versions, and selection as of a date.

- :mod:`legalrag.laws.reader` reads the dated-Markdown format (one file per version) into files and problems;
- :mod:`legalrag.laws.versions` groups them into laws (:class:`Library`, :class:`Law`, :class:`Version`);
- :mod:`legalrag.laws.renumber` maps old article numbers to new ones by aligning texts;
- :mod:`legalrag.laws.history` follows one article across versions;
- :mod:`legalrag.laws.store` writes versions as article records (JSONL) and reads them back;
- :mod:`legalrag.laws.select` filters documents by the version in force on a day.
"""

from legalrag.laws.reader import Article, LawFile, Problem, read_folder
from legalrag.laws.versions import Law, Library, Selection, Version, build_library, check_day, title_key

__all__ = ["Article", "Law", "LawFile", "Library", "Problem", "Selection", "Version", "build_library",
           "check_day", "read_folder", "title_key"]
