"""One turn in one place: what starts it (`inputs`), how it opens (`opening`), the
teacher's steps (`loop`) and tools (`tools`), its seams and door to the chat store
(`seams`), the turn itself (`turns`, framework-free) and how the app runs turns (`runner`).
"""
