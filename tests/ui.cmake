# tests/ui.cmake - (being written)
