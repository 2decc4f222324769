# Sphinx configuration for droce's guides: reStructuredText only, with what
# Debian's python3-sphinx ships (no extension outside Sphinx itself).
# Built by meson with -Ddocs=true (doc/meson.build), warnings as errors.
project = 'droce'
copyright = 'the droce authors'
author = 'the droce authors'
master_doc = 'index'
source_suffix = {'.rst': 'restructuredtext'}
exclude_patterns = ['_build']
extensions = []
highlight_language = 'none'
html_theme = 'alabaster'
html_static_path = []
# Every section title is a target for :ref:, prefixed with its document.
extensions.append('sphinx.ext.autosectionlabel')
autosectionlabel_prefix_document = True
