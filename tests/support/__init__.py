"""Helpers the tests share: servers on 127.0.0.1 speaking real wire formats, fixtures, runners."""
