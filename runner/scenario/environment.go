package scenario

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/agentrunner/runner/runner/result"
	"github.com/agentrunner/runner/runner/transcript"
	"github.com/agentrunner/runner/runner/workspace"
	"github.com/agentrunner/runner/tools/exec/container"
)

// removeTimeout bounds removing a container at the end, whatever ended the scenario.
const removeTimeout = 60 * time.Second

// engines holds one Engine per --engine name for the process, so that concurrent
// scenarios share its build lock and each Dockerfile is built once per run.
var engines sync.Map // name -> *engineOnce

type engineOnce struct {
	once sync.Once
	e    *container.Engine
	err  error
}

func findEngine(name string) (*container.Engine, error) {
	v, _ := engines.LoadOrStore(name, &engineOnce{})
	eo := v.(*engineOnce)
	eo.once.Do(func() { eo.e, eo.err = container.Find(name) })
	return eo.e, eo.err
}

// runID labels this process's containers when Options.RunID is empty.
var runID = sync.OnceValue(container.NewRunID)

// startEnvironment builds the task's image if it has a Dockerfile (cached by content),
// under prepCtx (no scenario timeout), and starts its container under ctx with the
// workspace dir mounted at the workdir, and mounts (an external agent's) bound read-only.
// A missing engine, a failed build or start is an error carrying the engine's message: a
// scenario error.
func (r *runState) startEnvironment(prepCtx, ctx context.Context, dir string, mounts []container.Mount) (*container.Container, string, error) {
	env := r.t.Environment
	e, err := findEngine(r.opts.Engine)
	if err != nil {
		return nil, "", err
	}
	image, began := env.Image, time.Now()
	var buildTime time.Duration
	if env.Dockerfile != "" {
		if image, err = e.Build(prepCtx, r.t.DockerfilePath()); err != nil {
			return nil, "", err
		}
		buildTime = time.Since(began)
	}
	// The workspace starts from what the image has at the workdir, which the mount hides.
	files, err := e.ImageFiles(prepCtx, image, env.Workdir)
	if err != nil {
		return nil, "", err
	}
	if err := workspace.CopyDir(files, dir); err != nil {
		return nil, "", fmt.Errorf("image files: %w", err)
	}
	began = time.Now()
	cfg := r.containerConfig(image, dir)
	cfg.Mounts = mounts // the agent's alone: verification's container gets none
	c, err := e.Start(ctx, cfg)
	if err != nil {
		return nil, "", err
	}
	var imageID string
	if r.t.Verify.FreshContainer {
		// The image verification will start from: this container's, by id, as the engine
		// recorded it, not a tag another build may move meanwhile.
		if imageID, err = c.ImageID(ctx); err != nil {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), removeTimeout)
			defer cancel()
			_ = c.Remove(rctx)
			return nil, "", err
		}
	}
	_ = r.record(0, transcript.Environment{
		Engine: e.Name(), Image: image, ImageID: imageID, Container: c.ID(), Workdir: c.Workdir(), VerifyDir: env.VerifyDir,
		RunID: c.RunID(), Build: result.Millis(buildTime), Start: result.Millis(time.Since(began)),
	})
	return c, imageID, nil
}

// containerConfig is the task's container with dir mounted at its workdir: the agent's,
// and with verify.fresh_container verification's, alike in image, network and limits.
func (r *runState) containerConfig(image, dir string) container.Config {
	env := r.t.Environment
	id := r.opts.RunID
	if id == "" {
		id = runID()
	}
	return container.Config{
		Image: image, Workspace: dir, Workdir: env.Workdir, Network: env.Network,
		CPUs: env.CPUs, MemoryMB: env.MemoryMB, User: env.User, Pids: r.t.Limits.Processes, RunID: id, Scenario: r.t.Name,
	}
}

// startVerifyEnvironment starts verification's own container (verify.fresh_container):
// a new one from imageID, the image the agent's container started from, with dir (a copy
// of the final workspace) mounted at the workdir, the same network and limits.
func (r *runState) startVerifyEnvironment(ctx context.Context, imageID, dir string) (*container.Container, error) {
	e, err := findEngine(r.opts.Engine)
	if err != nil {
		return nil, err
	}
	began := time.Now()
	c, err := e.Start(ctx, r.containerConfig(imageID, dir))
	if err != nil {
		return nil, fmt.Errorf("verification's container: %w", err)
	}
	_ = r.record(0, transcript.Environment{
		Engine: e.Name(), Image: imageID, ImageID: imageID, Verify: true, Container: c.ID(), Workdir: c.Workdir(),
		VerifyDir: r.t.Environment.VerifyDir, RunID: c.RunID(), Start: result.Millis(time.Since(began)),
	})
	return c, nil
}

// stopEnvironment removes the container and everything in it, also when the scenario was
// interrupted or timed out (ctx may be done: removal gets its own deadline).
func (r *runState) stopEnvironment(ctx context.Context, c *container.Container) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), removeTimeout)
	defer cancel()
	if err := c.Remove(rctx); err != nil {
		if r.res.Status == result.Errored {
			r.res.Reason += "; " + err.Error()
		} else {
			r.errorf("%v", err) // a container left behind is the infrastructure's failure
		}
	}
}

// addVerify puts the verify files where the task's tests expect them once the agent has
// finished: into the workspace, or, with an environment whose verify_dir is not the
// workdir, into a fresh copy of that directory inside the container (what the agent may
// have left there is removed first).
func (r *runState) addVerify(ctx context.Context, c *container.Container, dir string) error {
	env := r.t.Environment
	if c == nil || env.VerifyDir == env.Workdir {
		return workspace.AddVerify(r.t, dir)
	}
	if r.t.Verify.Copy == "" && len(r.t.Verify.Files) == 0 {
		return nil
	}
	staging, err := os.MkdirTemp("", "runner-verify-")
	if err != nil {
		return fmt.Errorf("verify files: %w", err)
	}
	defer func() { _ = os.RemoveAll(staging) }() // best effort: a leftover temp file harms nothing
	if err := workspace.AddVerify(r.t, staging); err != nil {
		return err
	}
	if err := c.CopyIn(ctx, staging, env.VerifyDir); err != nil {
		return fmt.Errorf("verify files: %w", err)
	}
	return nil
}
