"""Reading the memory of other systems (§5 import): one module per source kind, each a pure
reader from files to `Imported` items; `memdir.memory.importing` assigns ids, runs the
credential guard and writes them. See `memdir.importers.base` for the contract."""
