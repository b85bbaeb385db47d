"""A file that redacts the JSON text written to it: every trace file tracecols writes (the
augmented trace, the merged timeline) goes through it unless secrets are kept."""

from ..model.secrets import JsonTextRedactor


class RedactingFile:
    """A file that redacts what is written to it: JSON text in pieces that end between tokens
    (the rewriter writes up to a bracket, or up to an insertion, which sits at one)."""

    def __init__(self, f):
        self.f = f
        self.redactor = JsonTextRedactor()

    def write(self, data):
        # cut after an ASCII bracket, a piece is whole UTF-8; bytes that are not UTF-8 round-trip
        text = data.decode("utf-8", "surrogateescape")
        out = self.redactor.feed(text)
        self.f.write(data if out is text else out.encode("utf-8", "surrogateescape"))

    def flush(self):
        """Write what the redactor still holds (an object whose end it was waiting for)."""
        self.f.write(self.redactor.close().encode("utf-8", "surrogateescape"))
