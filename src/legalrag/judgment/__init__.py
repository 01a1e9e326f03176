"""legalrag.judgment"""
