"""legalrag.agents"""
