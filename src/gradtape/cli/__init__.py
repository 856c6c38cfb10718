"""The program: ``python -m gradtape``'s demo (``demo.py``) and ``python -m gradtape
inspect SCRIPT.py`` (``inspect.py``).

Imports: everything, the package root included (nothing imports it back).
"""
