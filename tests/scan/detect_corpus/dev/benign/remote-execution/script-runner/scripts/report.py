print('# Report')
