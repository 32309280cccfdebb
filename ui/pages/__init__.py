"""The pages: home (the knowledge graph), the classroom and the replay page; their routes
are added in `ui.app`."""
