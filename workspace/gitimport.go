package workspace

// Ref is a ref apply wrote into the tree's repository for a commit made inside.
type Ref struct {
	Name   string // refs/jail/ID/…
	Target string // the object it names
}

// importCommits brings the commits made inside the overlay into the tree's repository.
func (cs *ChangeSet) importCommits() ([]Ref, error) {
	return nil, nil
}
