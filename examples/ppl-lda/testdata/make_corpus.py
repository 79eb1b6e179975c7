#!/usr/bin/python3
"""Builds corpus.txt.gz, the document-term counts of examples/ppl-lda.

Source: the World English Bible (public domain), Debian package
sword-text-web (SWORD module engWEB2015eb), exported with mod2imp from
libsword-utils:

    apt-get install -y libsword-utils sword-text-web
    /usr/bin/python3 make_corpus.py            # writes corpus.txt.gz here

Each document is one chapter of the books in BOOKS. The OSIS markup is
removed (footnotes, cross-references and section titles dropped, tags
replaced by spaces), the text is lowercased, a possessive "'s" dropped,
everything but the letters a-z becomes a space, the words in STOP and
words of one or two letters are removed, and the vocabulary keeps the
words found in at least MIN_DOCS documents.

Output (gzip-compressed text, UTF-8):

    # comment lines
    documents D
    <D lines: the chapter's name, e.g. "Leviticus 4">
    vocabulary V
    <V lines: the words, sorted>
    counts N
    <N lines: "d v n", document and word indices from 0 and the count>
"""
import collections
import gzip
import os
import re
import subprocess
import sys

MODULE = "engWEB2015eb"
MIN_DOCS = 5

# (book as the module names it, first chapter, last chapter): law, history,
# poetry, wisdom, prophecy, gospels, acts, letters, apocalypse.
BOOKS = [
    ("Leviticus", 1, 27),
    ("Joshua", 1, 24),
    ("I Kings", 1, 22),
    ("Psalms", 1, 50),
    ("Proverbs", 1, 31),
    ("Song of Solomon", 1, 8),
    ("Ezekiel", 1, 48),
    ("Matthew", 1, 28),
    ("Acts", 1, 28),
    ("Romans", 1, 16),
    ("I Corinthians", 1, 16),
    ("Hebrews", 1, 13),
    ("Revelation of John", 1, 22),
]

STOP = set("""
a about above after again against all also am an and any are as at be
became because been before being below between both but by came can come
could did do does doing done down during each even every for from further
had has have having he her here hers herself him himself his how if in into
is it its itself just let like made make may me might more most much must my
myself no nor not now of off on once one only or other ought our ours
ourselves out over own said same say says shall she should so some such than
that the their theirs them themselves then there these they this those
through thus to too under until up upon us very was we went were what when
where which while who whom whose why will with would yes yet you your yours
yourself yourselves thee thou thy thine ye hath unto also therefore may
shalt wilt art doth neither either however among against nothing something
every many two three four five six seven eight nine ten first second third
go goes gone going get got give gave given take took taken put see saw seen
know knew known tell told speak spoke spoken again also already away back
behold according because whoever whatever things thing day days saying
don didn doesn isn aren wasn weren haven hasn hadn won wouldn couldn shouldn can cannot
""".split())


def chapters():
    """Yields (book, chapter, text) for every chapter of the module."""
    raw = subprocess.run(["mod2imp", MODULE], check=True, capture_output=True).stdout.decode("utf-8")
    key = None
    buf = collections.defaultdict(list)
    for line in raw.split("\n"):
        if line.startswith("$$$"):
            key = None
            m = re.fullmatch(r"\$\$\$(.+) (\d+):(\d+)", line)
            if m:
                key = (m.group(1), int(m.group(2)))
            continue
        if key is not None:
            buf[key].append(line)
    return buf


def words(text):
    text = re.sub(r"<note\b.*?</note>", " ", text, flags=re.S)
    text = re.sub(r"<title\b.*?</title>", " ", text, flags=re.S)
    text = re.sub(r"<[^>]*>", " ", text)
    text = text.lower().replace("\u2019s ", " ").replace("'s ", " ")
    text = re.sub(r"[^a-z]+", " ", text)
    return [w for w in text.split() if len(w) > 2 and w not in STOP]


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "corpus.txt.gz")
    text = chapters()
    names, docs = [], []
    for book, first, last in BOOKS:
        for ch in range(first, last + 1):
            lines = text.get((book, ch))
            if not lines:
                sys.exit("missing %s %d" % (book, ch))
            names.append("%s %d" % (book, ch))
            docs.append(collections.Counter(words("\n".join(lines))))
    df = collections.Counter(w for d in docs for w in d)
    vocab = sorted(w for w, n in df.items() if n >= MIN_DOCS)
    index = {w: i for i, w in enumerate(vocab)}
    triples = [(d, index[w], n) for d, c in enumerate(docs) for w, n in sorted(c.items()) if w in index]
    with open(out, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as f:
        put = lambda s: f.write((s + "\n").encode("utf-8"))
        put("# World English Bible (public domain), SWORD module %s; one document per chapter" % MODULE)
        put("# made by make_corpus.py: stop words removed, words in >= %d documents" % MIN_DOCS)
        put("documents %d" % len(names))
        for n in names:
            put(n)
        put("vocabulary %d" % len(vocab))
        for w in vocab:
            put(w)
        put("counts %d" % len(triples))
        for t in triples:
            put("%d %d %d" % t)
    tokens = sum(t[2] for t in triples)
    print("%d documents, %d words, %d tokens, %d nonzero counts -> %s (%d bytes)" %
          (len(names), len(vocab), tokens, len(triples), out, os.path.getsize(out)))


if __name__ == "__main__":
    main()
