package e2b

import (
	"context"
	"os"
	"strconv"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/jail-sandbox/jail/api"
	pb "github.com/jail-sandbox/jail/jail/e2b/envd/filesystem"
)

// filesystemService is envd's Filesystem service on a jail sandbox: each call one file
// operation of jail's API, which runs inside the sandbox with its restrictions (a symlink the
// sandbox planted leads where it leads inside, never to the host).
type filesystemService struct{ s *Server }

func (f *filesystemService) Stat(ctx context.Context, req *connect.Request[pb.StatRequest]) (*connect.Response[pb.StatResponse], error) {
	e, err := f.s.Client.Stat(sandboxOf(ctx), resolvePath(req.Msg.GetPath()))
	if err != nil {
		return nil, connectError(err)
	}
	return connect.NewResponse(&pb.StatResponse{Entry: entryInfo(e)}), nil
}

// MakeDir makes a directory and its parents; already_exists when it exists (the SDK's
// makeDir then returns false).
func (f *filesystemService) MakeDir(ctx context.Context, req *connect.Request[pb.MakeDirRequest]) (*connect.Response[pb.MakeDirResponse], error) {
	id, path := sandboxOf(ctx), resolvePath(req.Msg.GetPath())
	if e, err := f.s.Client.Stat(id, path); err == nil {
		return nil, connectError(api.Errorf(api.AlreadyExists, "%s: already exists (a %s)", path, e.Type))
	}
	e, err := f.s.Client.Mkdir(id, api.MkdirRequest{Path: path, Parents: true})
	if err != nil {
		return nil, connectError(err)
	}
	return connect.NewResponse(&pb.MakeDirResponse{Entry: entryInfo(e)}), nil
}

func (f *filesystemService) Move(ctx context.Context, req *connect.Request[pb.MoveRequest]) (*connect.Response[pb.MoveResponse], error) {
	e, err := f.s.Client.Move(sandboxOf(ctx), api.MoveRequest{From: resolvePath(req.Msg.GetSource()), To: resolvePath(req.Msg.GetDestination())})
	if err != nil {
		return nil, connectError(err)
	}
	return connect.NewResponse(&pb.MoveResponse{Entry: entryInfo(e)}), nil
}

// ListDir lists a directory, depth levels deep (0 means 1, as in envd).
func (f *filesystemService) ListDir(ctx context.Context, req *connect.Request[pb.ListDirRequest]) (*connect.Response[pb.ListDirResponse], error) {
	list, err := f.s.Client.ListFiles(sandboxOf(ctx), resolvePath(req.Msg.GetPath()), max(int(req.Msg.GetDepth()), 1))
	if err != nil {
		return nil, connectError(err)
	}
	out := &pb.ListDirResponse{}
	for i := range list.Entries {
		out.Entries = append(out.Entries, entryInfo(&list.Entries[i]))
	}
	return connect.NewResponse(out), nil
}

// Remove removes a file or a directory's tree; a missing path is no error (envd's RemoveAll).
func (f *filesystemService) Remove(ctx context.Context, req *connect.Request[pb.RemoveRequest]) (*connect.Response[pb.RemoveResponse], error) {
	err := f.s.Client.Remove(sandboxOf(ctx), api.RemoveRequest{Path: resolvePath(req.Msg.GetPath()), Recursive: true, MissingOK: true})
	if err != nil {
		return nil, connectError(err)
	}
	return connect.NewResponse(&pb.RemoveResponse{}), nil
}

const noWatch = "watching directories (files.watchDir): jail's API has no file events"

func (f *filesystemService) WatchDir(context.Context, *connect.Request[pb.WatchDirRequest], *connect.ServerStream[pb.WatchDirResponse]) error {
	return notImplemented(noWatch)
}

func (f *filesystemService) CreateWatcher(context.Context, *connect.Request[pb.CreateWatcherRequest]) (*connect.Response[pb.CreateWatcherResponse], error) {
	return nil, notImplemented(noWatch)
}

func (f *filesystemService) GetWatcherEvents(context.Context, *connect.Request[pb.GetWatcherEventsRequest]) (*connect.Response[pb.GetWatcherEventsResponse], error) {
	return nil, notImplemented(noWatch)
}

func (f *filesystemService) RemoveWatcher(context.Context, *connect.Request[pb.RemoveWatcherRequest]) (*connect.Response[pb.RemoveWatcherResponse], error) {
	return nil, notImplemented(noWatch)
}

// entryInfo is a jail file entry as envd describes one.
func entryInfo(e *api.FileEntry) *pb.EntryInfo {
	perm, _ := strconv.ParseUint(e.Mode, 8, 32)
	mode := os.FileMode(perm) & os.ModePerm
	info := &pb.EntryInfo{
		Name: e.Name, Path: e.Path, Size: e.Size, Mode: uint32(mode),
		ModifiedTime: timestamppb.New(e.MTime),
	}
	switch e.Type {
	case "file":
		info.Type = pb.FileType_FILE_TYPE_FILE
	case "dir":
		info.Type, mode = pb.FileType_FILE_TYPE_DIRECTORY, mode|os.ModeDir
	case "symlink":
		info.Type, mode = pb.FileType_FILE_TYPE_SYMLINK, mode|os.ModeSymlink
		info.SymlinkTarget = &e.SymlinkTarget
	}
	info.Permissions = mode.String()
	return info
}
