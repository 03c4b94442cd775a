#!/usr/bin/env python3
"""Writes the C++ of the given Markdown pages to OUT_DIR, for CMake to build.

A ```cpp block holding `int main(` is a complete program, written as it is. Any other
```cpp block is a fragment, compiled after a prelude (tests/docs/preludes/NAME.hpp)
that declares the names it uses. The line right before the fence names the prelude:

    <!-- prelude: actors -->                 inside `void fragment(PARAMETERS) { ... }`
    <!-- prelude: actors, scope: file -->    at namespace scope (types, functions)

PARAMETERS is the prelude's SWARM_FRAGMENT_PARAMETERS: the values a fragment uses (`app`,
`rt`, handles). Declared names are never defined: fragments are compiled, not linked.
Prelude `none` includes nothing; a block without the comment gets `default`. A #line
directive makes a compiler's errors name the page and its line.

Prints two lines for CMake: the programs, as `NAME|FILE|WHERE` (NAME a C identifier,
FILE the written source, WHERE the page and the heading the program is under), then the
fragments' sources; each a list separated by ';'.

Usage: extract_snippets.py OUT_DIR PAGE.md...
"""

import os
import re
import sys

PRELUDES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "preludes")
PRELUDE_COMMENT = re.compile(r"<!--\s*prelude:\s*([\w-]+)\s*(?:,\s*scope:\s*(\w+)\s*)?-->")


def blocks(page):
    """Each ```cpp block of `page`: its heading, first line, text and prelude comment."""
    heading = os.path.basename(page)
    block, start, comment, previous = None, 0, "", ""
    with open(page, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if block is None:
                if line.startswith("#"):
                    heading = line.lstrip("#").strip()
                elif line.strip() in ("```cpp", "```c++"):
                    block, start, comment = [], number, previous.strip()
            elif line.strip() == "```":
                yield heading, start, "".join(block), comment
                block = None
            else:
                block.append(line)
            previous = line


def prelude_of(where, comment):
    """The prelude and scope the comment before a fragment names."""
    match = PRELUDE_COMMENT.fullmatch(comment)
    if not match:
        if comment.startswith("<!--") and "prelude" in comment:
            sys.exit(f"{where}: write '<!-- prelude: NAME -->' or "
                     f"'<!-- prelude: NAME, scope: file -->', not '{comment}'")
        return "default", "function"
    prelude, scope = match.group(1), match.group(2) or "function"
    if scope not in ("function", "file"):
        sys.exit(f"{where}: scope is 'function' (the default) or 'file', not '{scope}'")
    if prelude != "none" and not os.path.exists(os.path.join(PRELUDES, prelude + ".hpp")):
        sys.exit(f"{where}: no prelude '{prelude}' ({PRELUDES}/{prelude}.hpp)")
    return prelude, scope


def fragment_source(page, start, text, comment):
    """The translation unit of a fragment: its prelude, then the fragment."""
    prelude, scope = prelude_of(f"{page}:{start}", comment)
    head = f'#include "{prelude}.hpp"\n' if prelude != "none" else ""
    body = f'#line {start + 1} "{page}"\n{text}'
    if scope == "file":
        return head + body
    parameters = "SWARM_FRAGMENT_PARAMETERS" if prelude != "none" else ""
    return f"{head}void fragment({parameters}) {{\n{body}}}\n"


def write(path, source):
    # Written only when it changed, so a configure does not rebuild it.
    old = open(path, encoding="utf-8").read() if os.path.exists(path) else None
    if old != source:
        with open(path, "w", encoding="utf-8") as f:
            f.write(source)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    programs, fragments = [], []
    for page in sys.argv[2:]:
        page_name = os.path.basename(page)
        for heading, start, text, comment in blocks(page):
            name = re.sub(r"\W+", "_", f"{os.path.splitext(page_name)[0]}_{start}").lower()
            path = os.path.join(out, name + ".cpp")
            if re.search(r"\bint\s+main\s*\(", text):
                if PRELUDE_COMMENT.fullmatch(comment):
                    sys.exit(f"{page}:{start}: a complete program takes no prelude")
                write(path, f'#line {start + 1} "{page}"\n{text}')
                programs.append(f"{name}|{path}|{page_name}, under '{heading}'")
            else:
                write(path, fragment_source(page, start, text, comment))
                fragments.append(path)
    print(";".join(programs))
    print(";".join(fragments), end="")


if __name__ == "__main__":
    main()
