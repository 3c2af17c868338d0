//go:build !linux

package search

import "io/fs"

// osDirEntries converts os.ReadDir's result.
func osDirEntries(list []fs.DirEntry, err error) ([]dirEntry, error) {
	if err != nil {
		return nil, err
	}
	ents := make([]dirEntry, len(list))
	for i, e := range list {
		ents[i] = dirEntry{name: e.Name(), typ: e.Type()}
	}
	return ents, nil
}
