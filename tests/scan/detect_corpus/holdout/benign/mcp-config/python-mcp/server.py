print('notes server')
