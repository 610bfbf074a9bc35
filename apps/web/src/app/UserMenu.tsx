import { DropdownMenu } from 'radix-ui';
import { useNavigate } from 'react-router';
import { useSignOut } from '../session/session';
import { useToast } from '../ui/toast';

export function UserMenu({ email, accountPath }: { email: string; accountPath: string }) {
  const navigate = useNavigate();
  const signOut = useSignOut();
  const toast = useToast();
  return (
    <DropdownMenu.Root>
      <DropdownMenu.Trigger className="user-menu" aria-label={`Account menu for ${email}`}>
        {email}
      </DropdownMenu.Trigger>
      <DropdownMenu.Portal>
        <DropdownMenu.Content className="menu" side="top" align="start" sideOffset={4}>
          <DropdownMenu.Item className="menu-item" onSelect={() => navigate(accountPath)}>
            Account and password
          </DropdownMenu.Item>
          <DropdownMenu.Separator className="menu-separator" />
          <DropdownMenu.Item
            className="menu-item"
            onSelect={() =>
              signOut.mutate(undefined, {
                onSuccess: () => navigate('/sign-in'),
                onError: (err) => toast({ title: 'Signing out failed', description: err.message, error: true }),
              })
            }
          >
            Sign out
          </DropdownMenu.Item>
        </DropdownMenu.Content>
      </DropdownMenu.Portal>
    </DropdownMenu.Root>
  );
}
