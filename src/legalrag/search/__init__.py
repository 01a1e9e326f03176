"""legalrag.search"""
