#!/usr/bin/env python3
"""Writes each complete C++ program of the given Markdown files (a ```cpp block holding
`int main(`) to OUT_DIR, and prints one line per program for CMake:
`NAME|FILE|WHERE`: NAME a C identifier, FILE the written source, WHERE the page and the
heading the program is under.

Usage: extract_snippets.py OUT_DIR PAGE.md...
"""

import os
import re
import sys


def programs(page):
    heading = os.path.basename(page)
    block, start = None, 0
    with open(page, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if block is None:
                if line.startswith("#"):
                    heading = line.lstrip("#").strip()
                elif line.strip() in ("```cpp", "```c++"):
                    block, start = [], number
            elif line.strip() == "```":
                text = "".join(block)
                if re.search(r"\bint\s+main\s*\(", text):
                    yield heading, start, text
                block = None
            else:
                block.append(line)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    lines = []
    for page in sys.argv[2:]:
        page_name = os.path.basename(page)
        for heading, start, text in programs(page):
            name = re.sub(r"\W+", "_", f"{os.path.splitext(page_name)[0]}_{start}").lower()
            path = os.path.join(out, name + ".cpp")
            source = f'#line {start + 1} "{page}"\n{text}'
            # Written only when it changed, so a configure does not rebuild it.
            old = open(path, encoding="utf-8").read() if os.path.exists(path) else None
            if old != source:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(source)
            lines.append(f"{name}|{path}|{page_name}, under '{heading}'")
    print(";".join(lines), end="")


if __name__ == "__main__":
    main()
