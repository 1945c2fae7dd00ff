# tests/slack.cmake - (being written)
