# tests/approval.cmake - (being written)
