"""legalrag.corpora"""
