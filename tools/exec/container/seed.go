package container

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ImageFiles returns a host directory holding what the image has at dir (its workdir),
// so the workspace can start from it: the bind mount of the workspace hides the image's
// own files there, and task images (Terminal-Bench's, Harbor's) put their data in /app.
// The copy is made once per image id and kept under the temp directory; an image without
// dir gives an empty directory.
func (e *Engine) ImageFiles(ctx context.Context, image, dir string) (string, error) {
	id, err := e.ImageID(ctx, image)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(id + "\x00" + dir))
	cache := filepath.Join(os.TempDir(), "runner-image-files", hex.EncodeToString(sum[:12]))
	if fi, err := os.Stat(cache); err == nil && fi.IsDir() {
		return cache, nil
	}
	var tmp string
	err = os.MkdirAll(filepath.Dir(cache), 0o700)
	if err == nil {
		tmp, err = os.MkdirTemp(filepath.Dir(cache), ".extract-")
	}
	if err != nil {
		return "", fmt.Errorf("image files: %w", err)
	}
	defer func() { _ = os.RemoveAll(tmp) }() // left only when the rename below failed
	id, err = e.command(ctx, nil, "create", "--entrypoint", "/bin/sh", image)
	if err != nil {
		return "", fmt.Errorf("image files of %s: %w", image, err)
	}
	id = strings.TrimSpace(id)
	defer func() { _, _ = e.command(context.WithoutCancel(ctx), nil, "rm", "-f", id) }()
	if _, err := e.command(ctx, nil, "cp", id+":"+dir+"/.", tmp); err != nil && !notFound(err) {
		return "", fmt.Errorf("image files of %s: %w", image, err)
	}
	if err := os.Rename(tmp, cache); err != nil {
		if fi, serr := os.Stat(cache); serr == nil && fi.IsDir() {
			return cache, nil // a concurrent scenario made it first
		}
		return "", fmt.Errorf("image files: %w", err)
	}
	return cache, nil
}

// notFound reports an engine error about a path the image does not have.
func notFound(err error) bool {
	msg := strings.ToLower(err.Error())
	return strings.Contains(msg, "no such file") || strings.Contains(msg, "could not be found")
}

// ImageID is the id of a local image (a name or an id).
func (e *Engine) ImageID(ctx context.Context, image string) (string, error) {
	out, err := e.command(ctx, nil, "image", "inspect", "--format", "{{.Id}}", image)
	if err != nil {
		return "", fmt.Errorf("inspect %s: %w", image, err)
	}
	return strings.TrimSpace(out), nil
}
