//! Cycle search in a directed graph: depth-first search with three colours (white:
//! unseen, grey: on the current path, black: finished; Cormen, Leiserson, Rivest &
//! Stein, *Introduction to Algorithms*, §22.3). A grey successor closes a cycle. One
//! search serves the subnet manager's channel-dependency check
//! (`subnet_manager::cdg`) and the simulator's deadlock detector.

const WHITE: u8 = 0;
const GREY: u8 = 1;
const BLACK: u8 = 2;

/// A cycle reachable from `starts` (tried in order), as its vertices in edge order, or
/// `None`. Vertices are numbered by `index` into `0..n`; `succ(v)` lists v's successors
/// in the order to explore them. Iterative, so deep graphs cannot overflow the stack.
pub fn find_cycle<V: Copy + Eq>(
    n: usize,
    index: impl Fn(V) -> usize,
    starts: impl IntoIterator<Item = V>,
    mut succ: impl FnMut(V) -> Vec<V>,
) -> Option<Vec<V>> {
    let mut colour = vec![WHITE; n];
    let mut stack: Vec<(V, Vec<V>, usize)> = vec![];
    for start in starts {
        if colour[index(start)] != WHITE {
            continue;
        }
        colour[index(start)] = GREY;
        stack.push((start, succ(start), 0));
        while let Some((v, next, i)) = stack.last_mut() {
            let Some(&w) = next.get(*i) else {
                colour[index(*v)] = BLACK;
                stack.pop();
                continue;
            };
            *i += 1;
            match colour[index(w)] {
                WHITE => {
                    colour[index(w)] = GREY;
                    let s = succ(w);
                    stack.push((w, s, 0));
                }
                GREY => {
                    let from = stack.iter().position(|x| x.0 == w).expect("a grey vertex is on the stack");
                    return Some(stack[from..].iter().map(|x| x.0).collect());
                }
                _ => {}
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::find_cycle;

    fn graph(edges: &[(usize, usize)], n: usize) -> impl Fn(usize) -> Vec<usize> + '_ {
        move |v| edges.iter().filter(|e| e.0 == v && e.1 < n).map(|e| e.1).collect()
    }

    #[test]
    fn finds_the_cycle_and_only_it() {
        // 0 → 1 → 2 → 3 → 1, and 0 → 4.
        let e = [(0, 1), (1, 2), (2, 3), (3, 1), (0, 4)];
        assert_eq!(find_cycle(5, |v| v, 0..5, graph(&e, 5)), Some(vec![1, 2, 3]));
    }

    #[test]
    fn a_dag_has_none_even_with_shared_descendants() {
        // A diamond: 0 → 1 → 3, 0 → 2 → 3: 3 is reached twice, black the second time.
        let e = [(0, 1), (0, 2), (1, 3), (2, 3)];
        assert_eq!(find_cycle(4, |v| v, 0..4, graph(&e, 4)), None);
    }

    #[test]
    fn self_loop_and_unreached_starts() {
        let e = [(2, 2)];
        assert_eq!(find_cycle(3, |v| v, [0, 1, 2], graph(&e, 3)), Some(vec![2]));
        assert_eq!(find_cycle(3, |v| v, [0, 1], graph(&e, 3)), None);
    }
}
