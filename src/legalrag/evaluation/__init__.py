"""legalrag.evaluation"""
